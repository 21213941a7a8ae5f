import { fieldError } from '../lib/format'

/**
 * A select over a label table (category enums, sort orders): value → label, in the table's order.
 * With `label`, it comes wrapped in its own <label>.
 */
export function LabelledSelect({
  id,
  name,
  labels,
  defaultValue,
  label,
}: {
  id?: string
  name: string
  labels: Record<string, string>
  defaultValue: string
  label?: string
}) {
  const options = Object.entries(labels).map(([value, text]) => (
    <option key={value} value={value}>
      {text}
    </option>
  ))
  return label ? (
    <label>
      {label}
      <select id={id} name={name} defaultValue={defaultValue}>
        {options}
      </select>
    </label>
  ) : (
    <select id={id} name={name} defaultValue={defaultValue}>
      {options}
    </select>
  )
}

/** The API's message for one field of a rejected form (ValidationError issues), beside the field. */
/** A refusal that names no field (NOT_FOUND, a conflict): shown once beside the form's buttons. */
export function FormError({
  state,
}: {
  state: { ok?: boolean; message?: string; issues?: readonly unknown[] | null }
}) {
  return !state.ok && state.message && !state.issues?.length ? (
    <span className="field-error" role="alert">
      {state.message}
    </span>
  ) : null
}

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
