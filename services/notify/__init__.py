"""Notifications (issue 23): kinds and payload (:mod:`.kinds`), configuration (:mod:`.config`), the
durable outbox in Redis (:mod:`.outbox`), the channels (:mod:`.channels`: Web Push, webhooks, email)
and the delivery workers (:mod:`.sender`)."""
