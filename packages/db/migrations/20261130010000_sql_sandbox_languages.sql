-- migrate:up
-- A procedural language lets a query catch the cancel PostgreSQL sends at its statement timeout
-- (a DO block looping over EXCEPTION WHEN query_canceled), so read-only SQL's roles get none:
-- USAGE on every trusted language is revoked from PUBLIC and granted back to the role running
-- migrations, the service's own. Existing functions keep running (executing one needs no USAGE).
DO $$
DECLARE
  lang name;
BEGIN
  FOR lang IN SELECT lanname FROM pg_language WHERE lanpltrusted LOOP
    EXECUTE format('REVOKE USAGE ON LANGUAGE %I FROM PUBLIC', lang);
    EXECUTE format('GRANT USAGE ON LANGUAGE %I TO CURRENT_USER', lang);
  END LOOP;
END
$$;

-- migrate:down
DO $$
DECLARE
  lang name;
BEGIN
  FOR lang IN SELECT lanname FROM pg_language WHERE lanpltrusted LOOP
    EXECUTE format('GRANT USAGE ON LANGUAGE %I TO PUBLIC', lang);
  END LOOP;
END
$$;
