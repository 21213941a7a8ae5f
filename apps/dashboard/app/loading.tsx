export default function Loading() {
  return <p aria-busy="true">Loading…</p>
}
