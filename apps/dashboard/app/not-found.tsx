import Link from 'next/link'

export default function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no such page. <Link href="/">Back to the status page</Link>.
      </p>
    </section>
  )
}
