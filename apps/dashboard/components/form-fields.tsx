import { fieldError } from '../lib/format'

/** A select over a label table (category enums): value → label, in the table's order. */
export function LabelledSelect({
  id,
  name,
  labels,
  defaultValue,
}: {
  id: string
  name: string
  labels: Record<string, string>
  defaultValue: string
}) {
  return (
    <select id={id} name={name} defaultValue={defaultValue}>
      {Object.entries(labels).map(([value, label]) => (
        <option key={value} value={value}>
          {label}
        </option>
      ))}
    </select>
  )
}

/** The API's message for one field of a rejected form (ValidationError issues), beside the field. */
export function FieldError({
  state,
  field,
}: {
  state: { issues?: { field: string; message: string }[] }
  field: string
}) {
  const message = fieldError(state.issues, field)
  return message ? (
    <span className="field-error" role="alert" data-testid={`error-${field}`}>
      {message}
    </span>
  ) : null
}
