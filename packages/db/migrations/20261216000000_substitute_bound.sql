-- migrate:up
-- SUBSTITUTE could multiply a text: every one of REPT's 100,000 code points replaced by a text of
-- thousands built a value of hundreds of megabytes, seconds of a backend per row before the
-- statement's time limit stopped it. Like REPT, it is now blank when its result would pass
-- 100,000 code points, unless it is no longer than its input (a long text may shrink or keep its
-- length). The result's length is counted before it is built.
CREATE OR REPLACE FUNCTION rb_f_substitute(input text, old text, replacement text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN coalesce(old, '') = '' THEN coalesce(input, '')
    WHEN char_length(coalesce(replacement, '')) > char_length(old)
      AND char_length(coalesce(input, ''))::float8
          + (char_length(coalesce(input, '')) - char_length(replace(coalesce(input, ''), old, '')))::float8
            / char_length(old) * (char_length(coalesce(replacement, '')) - char_length(old)) > 100000
      THEN NULL
    ELSE replace(coalesce(input, ''), old, coalesce(replacement, '')) END
$$;

-- migrate:down
CREATE OR REPLACE FUNCTION rb_f_substitute(input text, old text, replacement text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN coalesce(old, '') = '' THEN coalesce(input, '')
    ELSE replace(coalesce(input, ''), old, coalesce(replacement, '')) END
$$;
