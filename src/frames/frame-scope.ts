// Where a frame is, as every frame route names it: its project, its space and itself. Services
// of a frame's parts take it whole rather than three ids in a row (issue 37, item 4).

export interface FrameScope {
  projectId: string;
  spaceId: string;
  frameId: string;
}

/** The scope a route's path parameters name. */
export const frameScope = (p: {
  project_id: string;
  space_id: string;
  frame_id: string;
}): FrameScope => ({ projectId: p.project_id, spaceId: p.space_id, frameId: p.frame_id });
