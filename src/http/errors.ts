// The domain errors moved to src/errors.ts; this re-export keeps older imports working until
// every area imports from there.
export * from '../errors.ts';
