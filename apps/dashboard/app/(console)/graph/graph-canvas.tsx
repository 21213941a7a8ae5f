'use client'

import type { Core, ElementDefinition } from 'cytoscape'
import { useEffect, useRef, useState } from 'react'
import { relationshipKey } from '../../../lib/graph'

/**
 * The network drawn with cytoscape on a canvas. cytoscape touches `window` when it loads, so it is
 * imported here, in the browser, after mount (never during the server render). Tapping a node asks
 * to expand it, tapping an edge to show it; the lists beside the drawing do the same for keyboards
 * and screen readers.
 */
export function GraphCanvas({
  elements,
  selectedEdgeId,
  onNodeTap,
  onEdgeTap,
  label,
}: {
  elements: ElementDefinition[]
  selectedEdgeId: string | null
  onNodeTap: (id: string) => void
  onEdgeTap: (id: string) => void
  label: string
}) {
  const container = useRef<HTMLDivElement>(null)
  const [cy, setCy] = useState<Core | null>(null)
  const [failure, setFailure] = useState<string | null>(null)
  // The latest handlers, read by the listeners bound once at creation.
  const handlers = useRef({ onNodeTap, onEdgeTap })
  handlers.current = { onNodeTap, onEdgeTap }

  useEffect(() => {
    let instance: Core | null = null
    let cancelled = false
    import('cytoscape')
      .then(({ default: cytoscape }) => {
        if (cancelled || !container.current) return
        instance = cytoscape({
          container: container.current,
          style: [
            {
              selector: 'node',
              style: {
                'background-color': 'data(colour)',
                label: 'data(label)',
                color: '#1f2937',
                'font-size': 12,
                'text-valign': 'bottom',
                'text-margin-y': 4,
                width: 28,
                height: 28,
              },
            },
            {
              selector: 'node[depth = 0]',
              style: { width: 40, height: 40, 'border-width': 3, 'border-color': '#111827' },
            },
            {
              selector: 'edge',
              style: {
                width: 'data(width)',
                'line-color': '#94a3b8',
                'target-arrow-color': '#94a3b8',
                'target-arrow-shape': 'triangle',
                'curve-style': 'bezier',
                label: 'data(label)',
                'font-size': 10,
                color: '#475569',
                'text-rotation': 'autorotate',
                'text-background-color': '#ffffff',
                'text-background-opacity': 1,
              },
            },
            {
              selector: 'edge:selected',
              style: { 'line-color': '#f59e0b', 'target-arrow-color': '#f59e0b', color: '#92400e' },
            },
          ],
        })
        instance.on('tap', 'node', (event) => handlers.current.onNodeTap(event.target.data('ref')))
        instance.on('tap', 'edge', (event) => handlers.current.onEdgeTap(event.target.data('ref')))
        setCy(instance)
      })
      .catch((error: unknown) => setFailure(error instanceof Error ? error.message : String(error)))
    return () => {
      cancelled = true
      instance?.destroy()
    }
  }, [])

  // A new set of elements is laid out again. Rings by hop count (the first entity in the middle)
  // give the start; a force-directed pass from there spreads chains and hubs apart. No random
  // start, so the same graph is drawn the same way each time.
  useEffect(() => {
    if (!cy) return
    cy.elements().remove()
    cy.add(elements)
    cy.layout({
      name: 'concentric',
      concentric: (node) => 10 - Number(node.data('depth')),
      levelWidth: () => 1,
      minNodeSpacing: 60,
      animate: false,
    }).run()
    cy.layout({
      name: 'cose',
      randomize: false,
      animate: false,
      idealEdgeLength: () => 90,
      nodeRepulsion: () => 60_000,
      padding: 30,
    }).run()
    // A small graph fitted to the box would be drawn huge; a large one small: keep labels legible.
    if (cy.zoom() > 1.6) {
      cy.zoom(1.6)
      cy.center()
    }
    container.current?.setAttribute('data-drawn', String(cy.nodes().length))
  }, [cy, elements])

  // After the elements (a redraw drops the selection), the open edge is highlighted.
  useEffect(() => {
    if (!cy || !elements) return
    cy.edges().unselect()
    if (selectedEdgeId) cy.getElementById(relationshipKey(selectedEdgeId)).select()
  }, [cy, selectedEdgeId, elements])

  return (
    <>
      <div
        ref={container}
        className="graph-canvas"
        role="img"
        aria-label={label}
        data-testid="graph-canvas"
        data-ready={cy ? 'true' : 'false'}
      />
      {failure && (
        <p className="field-error" role="alert">
          The drawing could not start: {failure}. The lists below still show the graph.
        </p>
      )}
    </>
  )
}
