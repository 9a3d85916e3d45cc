-- migrate:up
-- A lookup's (or array_unique rollup's) JSON array as text[], the form filters, sorts and formulas
-- read arrays in (packages/db/src/field-types/linked-values.ts): strings as they are, numbers and
-- booleans in their JSON text, an object by its name (an API key's {id, name}) or filename (an
-- attachment), else its JSON. IMMUTABLE, so that a stored formula may read a lookup.
CREATE FUNCTION rb_f_json_texts(items jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT COALESCE(array_agg(
           CASE jsonb_typeof(x.item)
             WHEN 'string' THEN x.item #>> '{}'
             WHEN 'object' THEN COALESCE(x.item ->> 'name', x.item ->> 'filename', x.item::text)
             ELSE x.item::text
           END ORDER BY x.n), '{}'::text[])
    FROM jsonb_array_elements(CASE jsonb_typeof(items) WHEN 'array' THEN items ELSE '[]'::jsonb END)
         WITH ORDINALITY AS x(item, n)
   WHERE jsonb_typeof(x.item) <> 'null'
$$;

-- migrate:down
DROP FUNCTION rb_f_json_texts(jsonb);
