"""The ground floor every package stands on: settings, the one error root, text primitives, tenancy, logs, threads."""
