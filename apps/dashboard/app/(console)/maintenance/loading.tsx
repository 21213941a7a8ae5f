import { Skeleton } from '../../../components/route-states'

export default function Loading() {
  return <Skeleton label="maintenance" />
}
