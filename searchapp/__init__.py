"""The search application: models, doors (web, staff, admin, commands, tasks), selectors,
services, the search index, readers and topics. Its configuration lives apart, in ``config``."""
