// How e-mail addresses are compared everywhere (accounts, invitations, mail limits): without
// surrounding spaces, case-insensitively. Stored addresses are kept in this form.
export const normalizeEmail = (email: string) => email.trim().toLowerCase();
