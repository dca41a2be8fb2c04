// Where a frame answers (CONTRACT 5b): its URL as a link that opens in a new tab, or, when its
// agent has no edge to serve it (`url: null`), its hostname as text, since nothing answers there
// yet. The new tab gets no `window.opener` and no Referer: the app is someone else's code.
import type { Frame } from '../data/frames.ts';

/** Only http(s) becomes a link; the URL is the API's, and an href runs what it names. */
const linkable = (url: string) => /^https?:\/\//.test(url);

export function FrameAddress({ frame, why = false }: { frame: Frame; why?: boolean }) {
  if (frame.url && linkable(frame.url))
    return (
      <a className="address" href={frame.url} target="_blank" rel="noopener noreferrer">
        {frame.url}
        <span className="sr-only"> (opens in a new tab)</span>
      </a>
    );
  return (
    <span className="address">
      <code>{frame.hostname}</code>
      {why && <span className="muted"> no URL: its agent has no edge</span>}
    </span>
  );
}
