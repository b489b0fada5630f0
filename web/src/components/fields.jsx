// The small form pieces every view uses: a labelled field and a choice.
import { Text } from '@radix-ui/themes';

/**
 * A control (`children`) under its label, with a hint (or, in red, an
 * error) below it; a <label> unless `as` says otherwise (a field of two
 * controls is a div, so that its label names neither alone).
 */
export function Field({ label, hint, error, title, as: Tag = 'label', className = 'field', children }) {
  const note = error || hint;
  return (
    <Tag className={className} title={title}>
      <Text size="1" weight="medium" color="gray" className="field-name">
        {label}
      </Text>
      {children}
      {note && (
        <Text size="1" color={error ? 'red' : 'gray'} className="field-hint">
          {note}
        </Text>
      )}
    </Tag>
  );
}

/**
 * A select of `options` (strings or [value, label]), the browser's own:
 * Radix Themes' Select writes an inline style element, which the page's
 * content security policy refuses. The empty value is either a
 * `placeholder` (shown, not chosen) or a `fallback` (chosen: absent,
 * given to `onChange` as undefined).
 */
export function Choice({ label, value, onChange, options, placeholder, fallback, disabled, className = 'choice' }) {
  const read = (v) => (fallback !== undefined && v === '' ? undefined : v);
  return (
    <select className={`native-select ${className}`} aria-label={label} value={value} disabled={disabled} onChange={(e) => onChange(read(e.target.value))}>
      {placeholder !== undefined && (
        <option value="" disabled>
          {placeholder}
        </option>
      )}
      {fallback !== undefined && <option value="">{fallback}</option>}
      {options.map((o) => {
        const [v, text] = Array.isArray(o) ? o : [o, o];
        return (
          <option key={v} value={v}>
            {text}
          </option>
        );
      })}
    </select>
  );
}
