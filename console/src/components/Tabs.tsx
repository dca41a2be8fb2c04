// Tabs as the ARIA pattern has them (tablist, tab, tabpanel): the arrow keys, Home and End move
// between tabs and open the one they reach; only the open tab is in the Tab order. The open tab
// is the page's `?tab=` (none: the first), so a reload, a shared link or Back keeps it. At phone
// width the tab list scrolls on its own rather than widen the page.
import { type KeyboardEvent, type ReactNode, useEffect, useId, useRef } from 'react';
import { useSearchParams } from 'react-router';

export interface Tab {
  id: string;
  title: string;
}

export function Tabs({
  label,
  tabs,
  panel,
}: {
  label: string;
  tabs: Tab[];
  /** The open tab's content; the others are not rendered. */
  panel: (id: string) => ReactNode;
}) {
  const [search, setSearch] = useSearchParams();
  const prefix = useId();
  const list = useRef<HTMLDivElement>(null);
  const first = tabs[0]?.id ?? '';
  const asked = search.get('tab');
  const open = tabs.some((t) => t.id === asked) ? (asked ?? first) : first;
  const choose = (id: string) =>
    setSearch(
      (s) => {
        const next = new URLSearchParams(s);
        if (id === first) next.delete('tab');
        else next.set('tab', id);
        return next;
      },
      { preventScrollReset: true },
    );

  // The open tab in view in its list: one opened from a link may be out of it, and so may the
  // open one when the list narrows (a phone turned upright).
  // biome-ignore lint/correctness/useExhaustiveDependencies: a newly opened tab is what moves it.
  useEffect(() => {
    const box = list.current;
    if (!box) return;
    const show = () => {
      const tab = box.querySelector('[aria-selected="true"]')?.getBoundingClientRect();
      const seen = box.getBoundingClientRect();
      if (!tab) return;
      if (tab.left < seen.left) box.scrollLeft -= seen.left - tab.left;
      else if (tab.right > seen.right) box.scrollLeft += tab.right - seen.right;
    };
    show();
    // The window's resize, not a ResizeObserver on the list: a narrowing and widening within
    // one frame still resets the list's scroll, and only the window says it happened.
    window.addEventListener('resize', show);
    return () => window.removeEventListener('resize', show);
  }, [open]);

  function onKeyDown(e: KeyboardEvent) {
    const at = tabs.findIndex((t) => t.id === open);
    const to = {
      ArrowRight: (at + 1) % tabs.length,
      ArrowLeft: (at - 1 + tabs.length) % tabs.length,
      Home: 0,
      End: tabs.length - 1,
    }[e.key];
    const tab = to === undefined ? undefined : tabs[to];
    if (!tab) return;
    e.preventDefault();
    choose(tab.id);
    document.getElementById(`${prefix}-tab-${tab.id}`)?.focus();
  }

  return (
    <>
      <div className="tabs" role="tablist" aria-label={label} ref={list} onKeyDown={onKeyDown}>
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`${prefix}-tab-${t.id}`}
            aria-selected={t.id === open}
            aria-controls={`${prefix}-panel-${t.id}`}
            tabIndex={t.id === open ? 0 : -1}
            onClick={() => choose(t.id)}
          >
            {t.title}
          </button>
        ))}
      </div>
      <div
        className="tabpanel"
        role="tabpanel"
        id={`${prefix}-panel-${open}`}
        aria-labelledby={`${prefix}-tab-${open}`}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the ARIA pattern: a panel takes focus.
        tabIndex={0}
      >
        {panel(open)}
      </div>
    </>
  );
}
