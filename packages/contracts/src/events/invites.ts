import { z } from "zod";

/** Client event `invites_changed`: whoever can manage invitations fetches GET /invites again. */
export const InvitesChangedEvent = z.strictObject({ type: z.literal("invites_changed") });
