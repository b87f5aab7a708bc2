import { MessagingRegisterState } from "@chat/contracts";
import { registerRoute } from "@chat/platform";
import type { RoutePlugin } from "../deps";
import { getRegisterState } from "../queries/register-state";

export const registerStateRoutes: RoutePlugin = (app, deps) => {
  registerRoute(app, MessagingRegisterState, ({ params, identity }) =>
    getRegisterState(deps, identity, {
      fetchEventTypes: params.fetch_event_types ?? null,
      includeSubscribers: params.include_subscribers,
      notificationSettingsNull: params.client_capabilities.notification_settings_null === true,
    }),
  );
};
