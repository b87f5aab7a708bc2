import { z } from "zod";
import { CustomProfileField } from "../routes/custom-profile-fields";
import { defineEvent } from "./index";
import { noticeOf } from "./messages";

/** Client event `custom_profile_fields`: every field of the organization after any change. */
export const CustomProfileFieldsEvent = z.strictObject({ type: z.literal("custom_profile_fields"), fields: z.array(CustomProfileField) });

export const AccountsCustomProfileFieldsChanged = defineEvent(
  "accounts.custom_profile_fields.changed",
  z.object({ client: noticeOf(CustomProfileFieldsEvent) }),
);
