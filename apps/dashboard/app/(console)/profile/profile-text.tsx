import type { ReactNode } from 'react'

/**
 * A profile version's text as people read it: its "## Section" headings and "- " lines become
 * headings and lists (the writers produce only these two forms; any other line stays a paragraph).
 */
export function ProfileText({ content }: { content: string }) {
  const blocks: ReactNode[] = []
  let items: string[] = []
  const flush = () => {
    if (items.length)
      blocks.push(
        <ul key={`list-${blocks.length}`}>
          {items.map((item, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a version's text never changes
            <li key={i}>{item}</li>
          ))}
        </ul>,
      )
    items = []
  }
  for (const line of content.split('\n')) {
    if (line.startsWith('- ')) {
      items.push(line.slice(2))
      continue
    }
    flush()
    if (line.startsWith('## ')) blocks.push(<h3 key={`h-${blocks.length}`}>{line.slice(3)}</h3>)
    else if (line.trim()) blocks.push(<p key={`p-${blocks.length}`}>{line}</p>)
  }
  flush()
  return <div className="profile-text">{blocks}</div>
}
