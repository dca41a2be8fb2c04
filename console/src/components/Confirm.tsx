// A button for an action that cannot be undone: the first press asks, inline, the second does it.
import { useState } from 'react';

export function ConfirmButton({
  label,
  question,
  onConfirm,
  busy = false,
}: {
  label: string;
  question: string;
  onConfirm: () => void;
  busy?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  if (!asking)
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)} disabled={busy}>
        {label}
      </button>
    );
  return (
    <span className="actions">
      <span>{question}</span>
      <button
        type="button"
        className="danger"
        // biome-ignore lint/a11y/noAutofocus: the question replaced the button that had focus.
        autoFocus
        disabled={busy}
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes, {label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}
