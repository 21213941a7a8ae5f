import { SignInForm } from './sign-in-form'

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ expired?: string }> }) {
  const { expired } = await searchParams
  return <SignInForm notice={expired ? 'Your key stopped working; sign in again.' : undefined} />
}
