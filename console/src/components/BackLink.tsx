// The way up from a page, named after where it leads ("← Web shop", not "← Project"). While
// the name is being read, the link is there already, saying only that it goes back.
import { Link } from 'react-router';

export function BackLink({ to, name }: { to: string; name: string | undefined }) {
  return (
    <p>
      <Link to={to}>← {name ?? 'Back'}</Link>
    </p>
  );
}
