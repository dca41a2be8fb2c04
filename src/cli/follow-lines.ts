// A waited-for deployment's log lines (its build's, then its app's), printed as they come. The
// stream may lag the verdict (a build that fails at once), so finishing catches up from a page
// of the newest lines, printing each line once.
import type { Frameplane, Schemas } from '../sdk/index.ts';

type Frame = Schemas['Frame'];

export function followLines(
  fp: Frameplane,
  frame: Frame,
  since: string,
  print: (line: string) => void,
) {
  const abort = new AbortController();
  const printed = new Set<string>();
  const show = (l: Schemas['LogLine']) => {
    if (printed.has(l.id)) return;
    printed.add(l.id);
    print(`  ${l.line}`);
  };
  // A stream that fails is silent: the lines are a help, the verdict is what counts.
  const following = (async () => {
    for await (const e of fp.logs(frame, { since }, abort.signal)) show(e.data);
  })().catch(() => {});
  return {
    async finish() {
      abort.abort();
      await following;
      const page = (await fp
        .call(
          fp.api.GET('/v2/projects/{project_id}/spaces/{space_id}/frames/{frame_id}/logs', {
            params: {
              path: { project_id: frame.project_id, space_id: frame.space_id, frame_id: frame.id },
              query: { tail: 200 },
            },
          }),
        )
        .catch(() => ({ data: [] }))) as { data: Schemas['LogLine'][] };
      for (const l of page.data) if (l.at >= since) show(l);
    },
  };
}
