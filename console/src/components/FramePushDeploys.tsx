// A notice while a git push does not deploy the frame: a rollback pauses push deploys, so that
// the next push does not replace the release rolled back to. Members resume them.
import { fp, useWrite } from '../api.ts';
import { type Frame, frameKey } from '../data/frames.ts';
import { Problem } from './Form.tsx';

export function FramePushDeploys({ frame, canOperate }: { frame: Frame; canOperate: boolean }) {
  const resume = useWrite(
    // No If-Match: resuming means the same whatever else changed meanwhile.
    () => fp().updateFrame(frame, { push_deploys: { enabled: true } }),
    [frameKey(frame)],
  );
  const paused = frame.push_deploys;
  if (paused.enabled) return null;
  const since = paused.paused_at ? ` since ${new Date(paused.paused_at).toLocaleString()}` : '';
  const by = paused.paused_by ? `by rollback ${paused.paused_by}` : 'by hand';
  return (
    <section className="notice" id="push-deploys-paused" aria-label="Push deploys">
      <p>
        Push deploys are paused{since} ({by}): a git push does not deploy the frame.
      </p>
      {canOperate && (
        <button type="button" disabled={resume.isPending} onClick={() => resume.mutate(undefined)}>
          Resume push deploys
        </button>
      )}
      <Problem error={resume.error} />
    </section>
  );
}
