// What a holder of long-lived requests is given to count them: one up when it starts holding,
// one down when it lets go. A type only, so that http/ and agent-api/ import nothing else of
// metrics/.

export interface HeldCount {
  inc(): void;
  dec(): void;
}
