-- core 0003: on PostgreSQL a tenant signature is bound to one transaction. SQLite has no
-- roles or row-level security (the process that opens the file is the application), so
-- nothing changes here; the version row keeps both backends at the same core version.

SELECT 1;
