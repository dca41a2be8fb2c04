// The danger zone at the end of a frame's settings: deleting the frame (admins). Its domains
// and volumes are released with it, and the page goes back to the space.
import { useNavigate } from 'react-router';
import { fp, useWrite } from '../api.ts';
import { type Frame, params } from '../data/frames.ts';
import { ConfirmButton } from './Confirm.tsx';
import { Problem } from './Form.tsx';

export function FrameDelete({ frame }: { frame: Frame }) {
  const navigate = useNavigate();
  const remove = useWrite(
    () =>
      fp().call(
        fp().api.DELETE(
          '/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}',
          params(frame),
        ),
      ),
    [['space', frame.space_id, 'frames']],
  );
  return (
    <section className="danger-zone" aria-labelledby="danger-title">
      <h2 id="danger-title">Danger zone</h2>
      <h3>Delete the frame</h3>
      <p className="muted">
        Its replicas stop; its domains and volumes are released. This cannot be undone.
      </p>
      <ConfirmButton
        label="Delete frame"
        question={`Delete ${frame.name}?`}
        busy={remove.isPending}
        onConfirm={() =>
          remove.mutate(undefined, {
            onSuccess: () =>
              navigate(`/console/projects/${frame.project_id}/spaces/${frame.space_id}`),
          })
        }
      />
      <Problem error={remove.error} />
    </section>
  );
}
