// Stop, start and deploy (members and up), and the changes saved but not yet deployed. What
// happens next is followed by the frame page's event stream, not here.
import { fp, useWrite } from '../api.ts';
import { type Frame, type FrameRef, frameKey, params } from '../data/frames.ts';
import { Problem } from './Form.tsx';

export function FrameActions({ frame, canOperate }: { frame: Frame; canOperate: boolean }) {
  const ref: FrameRef = frame;
  const refresh = [frameKey(ref)];
  const path = '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}';
  const deploy = useWrite(
    () => fp().call(fp().api.POST(`${path}/deploy`, { ...params(ref), body: {} })),
    refresh,
  );
  const stop = useWrite(() => fp().call(fp().api.POST(`${path}/stop`, params(ref))), refresh);
  const start = useWrite(() => fp().call(fp().api.POST(`${path}/start`, params(ref))), refresh);
  const busy = deploy.isPending || stop.isPending || start.isPending;
  if (!canOperate) return null;
  return (
    <div className="frame-actions">
      <div className="actions">
        <button
          type="button"
          className="primary"
          disabled={busy}
          onClick={() => deploy.mutate(undefined)}
        >
          Deploy
        </button>
        {frame.desired_state === 'running' ? (
          <button type="button" disabled={busy} onClick={() => stop.mutate(undefined)}>
            Stop
          </button>
        ) : (
          <button type="button" disabled={busy} onClick={() => start.mutate(undefined)}>
            Start
          </button>
        )}
      </div>
      <Problem error={deploy.error ?? stop.error ?? start.error} />
    </div>
  );
}

/** The settings saved but not yet deployed, if any. */
export function PendingChanges({ frame, canOperate }: { frame: Frame; canOperate: boolean }) {
  const pending = frame.pending_changes;
  if (pending.length === 0) return null;
  return (
    <p className="notice" id="pending-changes">
      Saved, not yet deployed: {pending.join(', ')}.{canOperate && ' Deploy to run them.'}
    </p>
  );
}
