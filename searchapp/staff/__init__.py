"""Staff pages: uploads, dedup settings, the duplicates report and decisions (is_staff only)."""
