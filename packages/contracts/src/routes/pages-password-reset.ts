// Routes of the password-reset web pages (filled in by the work on them).
export {};
