// Routes of the multiuse-signup web pages (filled in by the work on them).
export {};
