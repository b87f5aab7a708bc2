// Routes of the email-change web pages (filled in by the work on them).
export {};
