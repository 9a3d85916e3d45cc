-- migrate:up
-- REPT of an empty text passed its 100,000 code-point bound at any count, so repeat('', 2^31-1)
-- ran: two billion turns of PostgreSQL's loop, about ten seconds of a backend per row, to build
-- an empty text. An empty text repeated is empty, whatever the count.
CREATE OR REPLACE FUNCTION rb_f_rept(input text, times float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN public.rb_f_whole(times) >= 0 THEN
    CASE WHEN coalesce(input, '') = '' THEN ''
      WHEN char_length(input)::float8 * public.rb_f_whole(times) <= 100000
        THEN repeat(input, public.rb_f_whole(times)) END
  END
$$;

-- migrate:down
CREATE OR REPLACE FUNCTION rb_f_rept(input text, times float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN public.rb_f_whole(times) >= 0
      AND char_length(coalesce(input, ''))::float8 * public.rb_f_whole(times) <= 100000
    THEN repeat(coalesce(input, ''), public.rb_f_whole(times)) END
$$;
