// How a client makes a team's or an org's slug from its name when none is given: the CLI's
// `teams create` and `orgs create`, and the console's forms until the user types a slug. One
// function, so that both offer the same slug for the same name, and one the API accepts
// (lowercase letters, digits and single dashes, at most 63 characters).

/** A slug from a name: "Web Team!" → "web-team", "Crème" → "creme"; `fallback` when nothing of
 *  the name is left. Accents go with their letter's marks (NFKD); the cut at 63 characters may
 *  leave a dash at the end, which goes too. */
export const slugOf = (name: string, fallback = 'team') =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '') || fallback;
