// One frame in a list of frames (the home page's, the project page's): its name as the way to
// its page, any cells the list adds, its status and its address.
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { Frame } from '../data/frames.ts';
import { FrameAddress } from './FrameAddress.tsx';

export function FrameRow({ frame, children }: { frame: Frame; children?: ReactNode }) {
  const page = `/console/projects/${frame.project_id}/spaces/${frame.space_id}/frames/${frame.id}`;
  return (
    <tr>
      <td>
        <Link to={page}>{frame.name}</Link>
      </td>
      {children}
      <td>
        <span className={`badge status-${frame.status}`}>{frame.status}</span>
      </td>
      <td>
        <FrameAddress frame={frame} />
      </td>
    </tr>
  );
}
