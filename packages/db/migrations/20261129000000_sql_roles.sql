-- migrate:up
-- Read-only SQL (records-api domain/sql) runs as one login role per database, which can read that
-- database's views (schema sql_<id>) and nothing else. The role's password is generated and kept
-- here encrypted (AES-256-GCM, the service's secret key); PostgreSQL keeps only its SCRAM verifier.
CREATE TABLE database_sql_roles (
  database_id uuid PRIMARY KEY REFERENCES databases (id) ON DELETE CASCADE,
  role_name text NOT NULL UNIQUE,
  password_encrypted text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);

-- What every role may do by default and a query role must not: reach the service's own schema,
-- hold locks that block the service (advisory locks), signal or watch other sessions, or change
-- its own settings in the middle of a statement (set_config; SET is a statement of its own, and
-- the query's transaction is always rolled back). Granted back to the role running migrations,
-- the service's own, in case it is not a superuser (a superuser passes every such check).
REVOKE ALL ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO CURRENT_USER;

DO $$
DECLARE
  fn regprocedure;
  rel regclass;
BEGIN
  FOR fn IN
    SELECT p.oid::regprocedure FROM pg_proc p
     WHERE p.pronamespace = 'pg_catalog'::regnamespace
       AND (p.proname LIKE 'pg\_%advisory%'
            OR p.proname LIKE 'pg\_stat\_get\_backend\_%'
            OR p.proname IN ('pg_terminate_backend', 'pg_cancel_backend', 'pg_stat_get_activity',
                             'pg_stat_get_progress_info', 'pg_lock_status', 'pg_blocking_pids',
                             'pg_safe_snapshot_blocking_pids', 'pg_prepared_xact', 'set_config',
                             'pg_notify', 'pg_stat_get_wal_receiver', 'pg_stat_get_subscription'))
  LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', fn);
    EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO CURRENT_USER', fn);
  END LOOP;
  FOR rel IN
    SELECT c.oid::regclass FROM pg_class c
     WHERE c.relnamespace = 'pg_catalog'::regnamespace
       AND (c.relname IN ('pg_stat_activity', 'pg_locks', 'pg_prepared_xacts', 'pg_stat_ssl',
                          'pg_stat_gssapi', 'pg_stat_replication', 'pg_stat_wal_receiver',
                          'pg_stat_subscription')
            OR c.relname LIKE 'pg\_stat\_progress\_%')
  LOOP
    EXECUTE format('REVOKE SELECT ON %s FROM PUBLIC', rel);
    EXECUTE format('GRANT SELECT ON %s TO CURRENT_USER', rel);
  END LOOP;
END
$$;

-- migrate:down
DROP TABLE database_sql_roles;
GRANT USAGE ON SCHEMA public TO PUBLIC;
