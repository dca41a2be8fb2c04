// On a preview frame's page: which frame it previews, for which branch (and pull request), and
// when it goes. It is made and removed by git pushes, so nothing here changes it.
import { Link } from 'react-router';
import { fp, useRead } from '../api.ts';
import { type Frame, frameKey, params } from '../data/frames.ts';
import { framePage } from './FramePreviewList.tsx';

type Preview = NonNullable<Frame['preview']>;

function Notice({ frame, preview }: { frame: Frame; preview: Preview }) {
  // The parent lives in the preview's space; read for its name (the id if it cannot be read).
  const ref = { project_id: frame.project_id, space_id: frame.space_id, id: preview.of };
  const parent = useRead(frameKey(ref), () =>
    fp().call(
      fp().api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}', params(ref)),
    ),
  );
  const pr = preview.pull_request ? ` (pull request #${preview.pull_request})` : '';
  return (
    <section className="notice" id="preview-of" aria-label="Preview">
      <p>
        Preview of <Link to={framePage(ref)}>{parent.data?.name ?? preview.of}</Link> for branch{' '}
        <code>{preview.branch}</code>
        {pr}, removed {new Date(preview.expires_at).toLocaleString()} unless pushed to again.
      </p>
    </section>
  );
}

export function FramePreviewOf({ frame }: { frame: Frame }) {
  return frame.preview ? <Notice frame={frame} preview={frame.preview} /> : null;
}
