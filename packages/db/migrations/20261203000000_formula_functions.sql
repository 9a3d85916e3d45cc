-- migrate:up
-- The pieces compiled formulas are built of (packages/db/src/formula/compile.ts; the semantics are
-- docs/formulas.md, "The semantics as built"). PostgreSQL raises on a float overflow or underflow,
-- a zero divisor, a negative square root or a date out of range; a formula must give null there
-- instead (or 0 for an underflow), never fail the write that computes it. All are IMMUTABLE so
-- that stored generated columns may use them; SQL functions whose argument appears more than
-- once keep a compiled formula linear in its length (PostgreSQL inlines them where that is cheap).

-- Text operations that need a collation go through these functions. PostgreSQL folds the constant
-- parts of a generated column's expression before it assigns collations, so lower('A') or
-- 'a' = 'b' written in the expression itself fails ("could not determine which collation"); a
-- function's body had its collations assigned when it was created. Text compares by code point.
-- Called with texts that are never NULL (blank is ""), so it need not be STRICT, and is inlined.
CREATE FUNCTION rb_f_text_cmp(a text, b text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN a = b THEN 0 WHEN a COLLATE "C" < b COLLATE "C" THEN -1 ELSE 1 END $$;

-- "" is blank.
CREATE FUNCTION rb_f_nonempty(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN t = '' THEN NULL ELSE t END $$;

CREATE FUNCTION rb_f_lower(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT lower(t) $$;

CREATE FUNCTION rb_f_upper(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT upper(t) $$;

-- TRIM: spaces, tabs and line breaks at both ends.
CREATE FUNCTION rb_f_trim(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT btrim(t, E' \t\n\r') $$;

-- ARRAYCOMPACT: without "" and blank items.
CREATE FUNCTION rb_f_compact(items text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array_remove(array_remove(items, ''), NULL) $$;

-- An attachments value (a jsonb array of files) as a formula reads it: the files' names, in order.
CREATE FUNCTION rb_f_attachment_names(files jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT coalesce(array_agg(file ->> 'fileName' ORDER BY at), '{}'::text[])
  FROM jsonb_array_elements(files) WITH ORDINALITY AS f(file, at)
$$;

-- Halving cannot overflow; a magnitude below 1e-300 halves to 0 rather than raise an underflow.
CREATE FUNCTION rb_f_half(x float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN abs(x) < 1e-300 THEN 0::float8 ELSE x * 0.5 END $$;

-- The arithmetic of formulas. Each is an expression PostgreSQL inlines (not STRICT, one SELECT,
-- no subquery: a function call per operation costs ten times the arithmetic) whose common case
-- is the plain operator; the rare magnitudes where the operator would raise go to a *_wide
-- function. NULL (blank) gives NULL: the plain operator's, or the STRICT wide function's.

-- a + b overflows exactly when a/2 + b/2 passes half the largest double (halving is exact there).
CREATE FUNCTION rb_f_add_wide(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE WHEN abs(public.rb_f_half(a) + public.rb_f_half(b)) > 8.98846567431158e307 THEN NULL ELSE a + b END
$$;

CREATE FUNCTION rb_f_add(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN abs(a) < 1e300 AND abs(b) < 1e300 THEN a + b ELSE public.rb_f_add_wide(a, b) END $$;

CREATE FUNCTION rb_f_sub(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT public.rb_f_add(a, -b) $$;

-- Past the magnitudes where it surely fits, a product is checked on a scaled copy: times 0.5
-- near the top (where halving is exact) and times 2^60 near the bottom, below which a result
-- rounds to zero (2^-1075 and less); PostgreSQL accepts subnormal results but not a zero.
CREATE FUNCTION rb_f_mul_wide(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN a = 0 OR b = 0 THEN a * b
    WHEN ln(abs(a)) + ln(abs(b)) > 710 THEN NULL
    WHEN ln(abs(a)) + ln(abs(b)) < -746 THEN 0::float8
    WHEN ln(abs(a)) + ln(abs(b)) > 700 THEN
      CASE WHEN abs((greatest(abs(a), abs(b)) * 0.5) * least(abs(a), abs(b))) > 8.98846567431158e307
        THEN NULL ELSE a * b END
    WHEN ln(abs(a)) + ln(abs(b)) < -700 THEN
      CASE WHEN abs((least(abs(a), abs(b)) * 1152921504606846976::float8) * greatest(abs(a), abs(b)))
                <= 2.848094538889218e-306::float8
        THEN 0::float8 ELSE a * b END
    ELSE a * b
  END
$$;

CREATE FUNCTION rb_f_mul(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN abs(a) BETWEEN 1e-150 AND 1e150 AND abs(b) BETWEEN 1e-150 AND 1e150 THEN a * b
    ELSE public.rb_f_mul_wide(a, b) END
$$;

CREATE FUNCTION rb_f_div_wide(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN b = 0 THEN NULL
    WHEN a = 0 THEN a / b
    WHEN ln(abs(a)) - ln(abs(b)) > 710 THEN NULL
    WHEN ln(abs(a)) - ln(abs(b)) < -746 THEN 0::float8
    WHEN ln(abs(a)) - ln(abs(b)) > 700 THEN
      CASE WHEN abs((a * 0.5) / b) > 8.98846567431158e307 THEN NULL ELSE a / b END
    WHEN ln(abs(a)) - ln(abs(b)) < -700 THEN
      CASE WHEN abs((a * 1152921504606846976::float8) / b) <= 2.848094538889218e-306::float8
        THEN 0::float8 ELSE a / b END
    ELSE a / b
  END
$$;

CREATE FUNCTION rb_f_div(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN abs(a) BETWEEN 1e-150 AND 1e150 AND abs(b) BETWEEN 1e-150 AND 1e150 THEN a / b
    ELSE public.rb_f_div_wide(a, b) END
$$;

-- exp is finite up to 709.782712893384 and nonzero from -745.1332191019411 (checked on PostgreSQL 15).
CREATE FUNCTION rb_f_exp(x float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE WHEN x > 709.782712893384 THEN NULL WHEN x < -745.1332191019411 THEN 0::float8 ELSE exp(x) END
$$;

CREATE FUNCTION rb_f_ln(x float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN x <= 0 THEN NULL ELSE ln(x) END $$;

CREATE FUNCTION rb_f_log(x float8, base float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN base = 1 THEN NULL ELSE public.rb_f_div(public.rb_f_ln(x), public.rb_f_ln(base)) END $$;

CREATE FUNCTION rb_f_sqrt(x float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT CASE WHEN x < 0 THEN NULL ELSE sqrt(x) END $$;

-- A negative base takes only whole powers (else no real result); 0 to a negative power has none.
-- |result| = e^(b·ln|a|) tells overflow and underflow apart from what power() can give; within
-- one unit of either edge the exact decimal power decides.
CREATE FUNCTION rb_f_pow(a float8, b float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  magnitude float8;
BEGIN
  IF a = 0 THEN
    RETURN CASE WHEN b < 0 THEN NULL WHEN b = 0 THEN 1 ELSE 0 END;
  END IF;
  IF a < 0 AND b <> trunc(b) THEN
    RETURN NULL;
  END IF;
  IF abs(a) = 1 OR b = 0 THEN
    RETURN power(a, b);
  END IF;
  IF abs(b) > 1e300 THEN
    magnitude := CASE WHEN (abs(a) > 1) = (b > 0) THEN 'Infinity'::float8 ELSE '-Infinity'::float8 END;
  ELSE
    magnitude := b * ln(abs(a));
  END IF;
  IF magnitude > 710 THEN
    RETURN NULL;
  ELSIF magnitude < -746 THEN
    RETURN 0;
  ELSIF magnitude > 709 THEN
    IF power(abs(a)::numeric, b::numeric) > 1.7976931348623157e308::numeric THEN
      RETURN NULL;
    END IF;
  ELSIF magnitude < -744 THEN
    IF power(abs(a)::numeric, b::numeric) < 2.5e-324::numeric THEN
      RETURN 0;
    END IF;
  END IF;
  RETURN power(a, b);
END
$$;

-- 10^k for the whole k of ROUND's precision (0 to 22), all exact doubles.
CREATE FUNCTION rb_f_pow10(k integer) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT power(10::float8, k::float8) $$;

CREATE FUNCTION rb_f_round_unit(x float8, mode text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE mode
    WHEN 'half' THEN floor(x + 0.5)
    WHEN 'up' THEN sign(x) * ceil(abs(x))
    ELSE trunc(x)
  END
$$;

-- ROUND, ROUNDUP and ROUNDDOWN: mode 'half' (half up toward +infinity), 'up' (away from zero),
-- 'down' (toward zero), at p places (negative: tens, hundreds...), p truncated to -22 … 22. One
-- expression, which PostgreSQL inlines.
CREATE FUNCTION rb_f_round(x float8, places float8, mode text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    -- least() would pass over a blank: ROUND(x, BLANK()) is blank.
    WHEN places IS NULL THEN NULL
    WHEN trunc(places) >= 0 THEN public.rb_f_div(
      public.rb_f_round_unit(public.rb_f_mul(x, public.rb_f_pow10(least(22, trunc(places))::integer)), mode),
      public.rb_f_pow10(least(22, trunc(places))::integer))
    ELSE public.rb_f_mul(
      public.rb_f_round_unit(public.rb_f_div(x, public.rb_f_pow10(least(22, -trunc(places))::integer)), mode),
      public.rb_f_pow10(least(22, -trunc(places))::integer))
  END
$$;

-- CEILING and FLOOR to a multiple of |significance|, rounded to 15 significant digits as a
-- spreadsheet shows it (19 × 0.1 is 1.9000000000000001 as a double; FLOOR(1.99, 0.1) is 1.9).
-- float8 to numeric keeps exactly 15 significant digits (DBL_DIG); the largest doubles keep all
-- of theirs, since rounded they would pass the largest double.
CREATE FUNCTION rb_f_to_multiple(x float8, significance float8, up boolean) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE WHEN abs(multiple) > 1.7976931348623e308 THEN multiple ELSE multiple::numeric::float8 END
  FROM (SELECT public.rb_f_mul(
    CASE WHEN up THEN ceil(public.rb_f_div(x, abs(significance))) ELSE floor(public.rb_f_div(x, abs(significance))) END,
    abs(significance)) AS multiple) m
$$;

CREATE FUNCTION rb_f_mod(a float8, b float8) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT public.rb_f_sub(a, public.rb_f_mul(b, trunc(public.rb_f_div(a, b)))) $$;

-- A text as a number, VALUE's grammar: trimmed, currency symbols and thousands commas dropped,
-- sign, digits, decimals, exponent and a trailing %; null otherwise. Read through numeric from
-- the first significant digit, so an exponent of any size gives null (too big) or 0 (too small)
-- rather than an error, and the double is the correctly rounded one, as JavaScript's Number reads.
CREATE FUNCTION rb_f_value(input text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  cleaned text := regexp_replace(btrim(input, E' \t\n\r'), '[$€£¥,]', '', 'g');
  parts text[];
  digits text;
  point_at integer;
  exponent numeric;
  first_significant integer;
  decimal_exponent numeric;
  result float8;
BEGIN
  parts := regexp_match(cleaned, '^([+-]?)([0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?(%?)$');
  IF parts IS NULL THEN
    RETURN NULL;
  END IF;
  point_at := strpos(parts[2], '.');
  digits := replace(parts[2], '.', '');
  IF point_at = 0 THEN
    point_at := length(digits) + 1;
  END IF;
  first_significant := length(digits) - length(ltrim(digits, '0')) + 1;
  IF first_significant > length(digits) THEN
    RETURN 0;
  END IF;
  exponent := coalesce(parts[3], '0')::numeric;
  -- The power of ten of the first significant digit.
  decimal_exponent := exponent + (point_at - 1 - first_significant);
  IF decimal_exponent > 308 THEN
    RETURN NULL;
  ELSIF decimal_exponent < -325 THEN
    RETURN 0;
  END IF;
  digits := substr(digits, first_significant, 800);
  -- 0.d1d2... × 10^(decimal_exponent + 1), which numeric reads exactly.
  -- Decimals from 2^1024 - 2^970 up round to infinity.
  IF ('0.' || digits || 'e' || (decimal_exponent + 1)::text)::numeric >= 179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792::numeric THEN
    RETURN NULL;
  ELSIF ('0.' || digits || 'e' || (decimal_exponent + 1)::text)::numeric <= 2.4703282292062327e-324::numeric THEN
    RETURN 0;
  END IF;
  result := ('0.' || digits || 'e' || (decimal_exponent + 1)::text)::float8;
  IF parts[4] = '%' THEN
    result := public.rb_f_div(result, 100);
  END IF;
  RETURN CASE WHEN parts[1] = '-' THEN -result ELSE result END;
END
$$;

-- A number as JavaScript's String(number) writes it: positional from 1e-7 to 1e21, else with an
-- exponent (1e+21, 1.5e-7); PostgreSQL's own output is as short but switches form elsewhere.
CREATE FUNCTION rb_f_number_text(x float8) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  shortest text;
  parts text[];
  digits text;
  exponent integer;
  point_at integer;
  sign text := '';
BEGIN
  IF x = 0 THEN
    RETURN '0';
  END IF;
  shortest := x::text;
  IF x < 0 THEN
    sign := '-';
    shortest := substr(shortest, 2);
  END IF;
  parts := regexp_match(shortest, '^([0-9.]+)e([+-][0-9]+)$');
  IF parts IS NULL THEN
    RETURN sign || shortest;
  END IF;
  exponent := parts[2]::integer;
  IF exponent >= 21 OR exponent < -6 THEN
    RETURN sign || parts[1] || 'e' || CASE WHEN exponent > 0 THEN '+' ELSE '-' END || abs(exponent)::text;
  END IF;
  digits := replace(parts[1], '.', '');
  -- The mantissa has one digit before its point, so the point falls after exponent + 1 digits.
  point_at := exponent + 1;
  IF point_at >= length(digits) THEN
    RETURN sign || digits || repeat('0', point_at - length(digits));
  ELSIF point_at <= 0 THEN
    RETURN sign || '0.' || repeat('0', -point_at) || digits;
  END IF;
  RETURN sign || left(digits, point_at) || '.' || substr(digits, point_at + 1);
END
$$;

-- to_char and array_to_string are only STABLE in general (locale patterns, element output);
-- with these fixed patterns and text elements they are immutable.
CREATE FUNCTION rb_f_date_text(ts timestamp) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT to_char(ts, 'YYYY-MM-DD') $$;

CREATE FUNCTION rb_f_datetime_text(ts timestamp) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT to_char(ts, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

CREATE FUNCTION rb_f_join(items text[], separator text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array_to_string(items, separator) $$;

-- A value as an array: blank and "" (which a text field stores as blank) are no item.
CREATE FUNCTION rb_f_one_item(item text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN coalesce(item, '') = '' THEN '{}'::text[] ELSE ARRAY[item] END $$;

CREATE FUNCTION rb_f_unique(items text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT coalesce(array_agg(item ORDER BY first_at), '{}'::text[])
  FROM (SELECT item, min(at) AS first_at FROM unnest(items) WITH ORDINALITY AS u(item, at) GROUP BY item) firsts
$$;

-- The items of an array argument of MIN, MAX, SUM and AVERAGE as numbers, in order.
CREATE FUNCTION rb_f_item_numbers(items text[]) RETURNS float8[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT coalesce(array_agg(public.rb_f_value(item) ORDER BY at), '{}'::float8[]) FROM unnest(items) WITH ORDINALITY AS u(item, at) $$;

-- MIN, MAX, SUM and AVERAGE over numbers in argument order; blanks are left out. Sums are added
-- left to right with the overflow check, as the oracle adds them.
CREATE FUNCTION rb_f_aggregate(numbers float8[], kind text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  item float8;
  total float8 := 0;
  counted integer := 0;
  best float8;
BEGIN
  FOREACH item IN ARRAY numbers LOOP
    CONTINUE WHEN item IS NULL;
    counted := counted + 1;
    IF kind = 'min' THEN
      best := least(best, item);
    ELSIF kind = 'max' THEN
      best := greatest(best, item);
    ELSE
      total := public.rb_f_add(total, item);
      IF total IS NULL THEN
        RETURN NULL;
      END IF;
    END IF;
  END LOOP;
  RETURN CASE kind
    WHEN 'sum' THEN total
    WHEN 'average' THEN CASE WHEN counted = 0 THEN NULL ELSE public.rb_f_div(total, counted) END
    ELSE best
  END;
END
$$;

-- Counts and positions of the text functions: truncated toward zero, capped to an integer; a
-- blank or negative count (a start below 1) gives blank.
CREATE FUNCTION rb_f_whole(x float8) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT greatest(-2147483647, least(2147483647, trunc(x)))::integer $$;

CREATE FUNCTION rb_f_left(input text, count float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN public.rb_f_whole(count) >= 0 THEN left(coalesce(input, ''), public.rb_f_whole(count)) END $$;

CREATE FUNCTION rb_f_right(input text, count float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT CASE WHEN public.rb_f_whole(count) >= 0 THEN right(coalesce(input, ''), public.rb_f_whole(count)) END $$;

CREATE FUNCTION rb_f_mid(input text, start float8, count float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN public.rb_f_whole(start) >= 1 AND public.rb_f_whole(count) >= 0
    THEN substr(coalesce(input, ''), public.rb_f_whole(start), public.rb_f_whole(count)) END
$$;

CREATE FUNCTION rb_f_replace(input text, start float8, count float8, replacement text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN public.rb_f_whole(start) >= 1 AND public.rb_f_whole(count) >= 0
    THEN left(coalesce(input, ''), public.rb_f_whole(start) - 1) || coalesce(replacement, '')
         || substr(coalesce(input, ''), least(public.rb_f_whole(start)::bigint + public.rb_f_whole(count), 2147483647)::integer) END
$$;

-- REPT stops at 100,000 code points, so one formula cannot build a text of any size.
CREATE FUNCTION rb_f_rept(input text, times float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN public.rb_f_whole(times) >= 0
      AND char_length(coalesce(input, ''))::float8 * public.rb_f_whole(times) <= 100000
    THEN repeat(coalesce(input, ''), public.rb_f_whole(times)) END
$$;

-- 0 to 6 from Sunday, or from Monday when start names it.
CREATE FUNCTION rb_f_weekday(ts timestamp, start text) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT CASE lower(start)
    WHEN 'sunday' THEN extract(dow FROM ts)::float8
    WHEN 'monday' THEN ((extract(dow FROM ts)::integer + 6) % 7)::float8
  END
$$;

-- FIND's position (1-based, 0 when absent) of needle in haystack at or after start; a blank
-- start is blank.
CREATE FUNCTION rb_f_find(needle text, haystack text, start float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN from_ IS NULL THEN NULL
    WHEN from_ > char_length(coalesce(haystack, '')) + 1 THEN 0
    WHEN coalesce(needle, '') = '' THEN from_
    ELSE CASE WHEN found = 0 THEN 0 ELSE found + from_ - 1 END
  END
  -- greatest() would pass over a blank start.
  FROM (SELECT CASE WHEN start IS NOT NULL THEN greatest(1, public.rb_f_whole(start)) END AS from_) s,
       LATERAL (SELECT strpos(substr(coalesce(haystack, ''), from_), coalesce(needle, '')) AS found) f
$$;

-- SUBSTITUTE of every occurrence, left to right and not overlapping.
CREATE FUNCTION rb_f_substitute(input text, old text, replacement text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN coalesce(old, '') = '' THEN coalesce(input, '')
    ELSE replace(coalesce(input, ''), old, coalesce(replacement, '')) END
$$;

-- SUBSTITUTE of the nth occurrence only (from 1); a blank nth is blank.
CREATE FUNCTION rb_f_substitute(input text, old text, replacement text, nth float8) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN nth IS NULL THEN NULL
    WHEN coalesce(old, '') = '' THEN coalesce(input, '')
    WHEN public.rb_f_whole(nth) < 1 OR public.rb_f_whole(nth) >= cardinality(pieces) THEN coalesce(input, '')
    ELSE array_to_string(pieces[1:public.rb_f_whole(nth)], old) || coalesce(replacement, '')
         || array_to_string(pieces[public.rb_f_whole(nth) + 1:], old)
  END
  FROM (SELECT string_to_array(coalesce(input, ''), old) AS pieces) p
$$;

-- Dates a formula gives lie in the years 1 to 9999, which the API can write.
CREATE FUNCTION rb_f_in_range(ts timestamp) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN ts >= make_timestamp(1, 1, 1, 0, 0, 0) AND ts < make_timestamp(10000, 1, 1, 0, 0, 0) THEN ts END
$$;

-- A text as a date-time in UTC, in the formats docs/formulas.md lists; null when it is none or
-- names an impossible date or time.
CREATE FUNCTION rb_f_parse_date(input text) RETURNS timestamp
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  text_ text := btrim(input, E' \t\n\r');
  m text[];
  y integer;
  mo integer;
  d integer;
  h integer := 0;
  mi integer := 0;
  s numeric := 0;
  offset_minutes integer := 0;
  month_names text[] := ARRAY['jan','feb','mar','apr','may','jun','jul','aug','sep','oct','nov','dec'];
  full_names text[] := ARRAY['january','february','march','april','may','june','july','august','september','october','november','december'];
BEGIN
  IF length(text_) > 64 THEN
    RETURN NULL;
  END IF;
  m := regexp_match(text_, '^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2}(?:\.[0-9]{1,6})?))?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$');
  IF m IS NOT NULL THEN
    y := m[1]::integer; mo := m[2]::integer; d := m[3]::integer;
    IF m[4] IS NOT NULL THEN
      h := m[4]::integer; mi := m[5]::integer; s := coalesce(m[6], '0')::numeric;
    END IF;
    IF m[7] IS NOT NULL AND m[7] <> 'Z' THEN
      IF substr(replace(m[7], ':', ''), 2, 2)::integer > 23 OR substr(replace(m[7], ':', ''), 4, 2)::integer > 59 THEN
        RETURN NULL;
      END IF;
      offset_minutes := (substr(replace(m[7], ':', ''), 2, 2)::integer * 60 + substr(replace(m[7], ':', ''), 4, 2)::integer)
        * CASE WHEN left(m[7], 1) = '-' THEN -1 ELSE 1 END;
    END IF;
  ELSE
    m := regexp_match(text_, '^([0-9]{1,2})/([0-9]{1,2})/([0-9]{4}|[0-9]{2})(?: ([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?)?$');
    IF m IS NOT NULL THEN
      mo := m[1]::integer; d := m[2]::integer; y := m[3]::integer;
      IF length(m[3]) = 2 THEN
        y := y + CASE WHEN y <= 68 THEN 2000 ELSE 1900 END;
      END IF;
    ELSE
      m := regexp_match(lower(text_), '^([0-9]{1,2}) ([a-z]{3,9}) ([0-9]{4})(?: ([0-9]{1,2}):([0-9]{2})(?::([0-9]{2}))?)?$');
      IF m IS NULL THEN
        RETURN NULL;
      END IF;
      d := m[1]::integer; y := m[3]::integer;
      mo := coalesce(array_position(month_names, m[2]), array_position(full_names, m[2]));
      IF mo IS NULL THEN
        RETURN NULL;
      END IF;
    END IF;
    IF m[4] IS NOT NULL THEN
      h := m[4]::integer; mi := m[5]::integer; s := coalesce(m[6], '0')::numeric;
    END IF;
  END IF;
  IF y < 1 OR mo < 1 OR mo > 12 OR d < 1 OR h > 23 OR mi > 59 OR s >= 60 THEN
    RETURN NULL;
  END IF;
  IF d > extract(day FROM (make_date(y, mo, 1) + interval '1 month' - interval '1 day'))::integer THEN
    RETURN NULL;
  END IF;
  -- To the millisecond, as the API writes a moment.
  RETURN public.rb_f_in_range(date_trunc('milliseconds', make_timestamp(y, mo, d, h, mi, s::float8) - make_interval(mins => offset_minutes)));
END
$$;


-- The date functions, like the arithmetic, are single expressions without FROM, which PostgreSQL
-- inlines; a unit given as a literal (the usual case) is then folded to its constant when a
-- statement is planned. A function run per row costs a hundred times more (146 µs a call for a
-- DATETIME_DIFF that read its unit through FROM).

-- Milliseconds since 1970 of a moment, and back; exact for every moment of the years 1 to 9999.
CREATE FUNCTION rb_f_epoch_ms(ts timestamp) RETURNS float8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT floor(extract(epoch FROM ts) * 1000)::float8 $$;

CREATE FUNCTION rb_f_from_epoch_ms(ms float8) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN abs(ms) < 253402300800000 THEN
    make_timestamp(1970, 1, 1, 0, 0, 0)
      + make_interval(days => floor(ms / 86400000)::integer,
                      secs => (ms - floor(ms / 86400000) * 86400000) / 1000)
  END
$$;

-- The milliseconds in one unit of DATEADD and DATETIME_DIFF, and the months of a month unit; null
-- for any other. Abbreviations are case-sensitive (m is minutes, M months).
CREATE FUNCTION rb_f_unit_ms(unit text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN unit = 'ms' OR lower(unit) IN ('millisecond', 'milliseconds') THEN 1::float8
    WHEN unit = 's' OR lower(unit) IN ('second', 'seconds') THEN 1000::float8
    WHEN unit = 'm' OR lower(unit) IN ('minute', 'minutes') THEN 60000::float8
    WHEN unit = 'h' OR lower(unit) IN ('hour', 'hours') THEN 3600000::float8
    WHEN unit = 'd' OR lower(unit) IN ('day', 'days') THEN 86400000::float8
    WHEN unit = 'w' OR lower(unit) IN ('week', 'weeks') THEN 604800000::float8
  END
$$;

CREATE FUNCTION rb_f_unit_months(unit text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN unit = 'M' OR lower(unit) IN ('month', 'months') THEN 1
    WHEN unit = 'Q' OR lower(unit) IN ('quarter', 'quarters') THEN 3
    WHEN unit = 'y' OR lower(unit) IN ('year', 'years') THEN 12
  END
$$;

-- A moment moved by amount × unit_ms milliseconds, floored to a whole millisecond.
CREATE FUNCTION rb_f_add_ms(ts timestamp, amount float8, unit_ms float8) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT public.rb_f_in_range(public.rb_f_from_epoch_ms(floor(public.rb_f_add(public.rb_f_epoch_ms(ts), public.rb_f_mul(amount, unit_ms)))))
$$;

-- A moment moved by trunc(amount) × months months, the day clamped to the month's last. A step
-- that surely leaves the years 1 to 9999 is not taken (PostgreSQL's own range ends at 4713 BC);
-- the count is bounded before it is multiplied, which could overflow.
CREATE FUNCTION rb_f_add_months(ts timestamp, amount float8, months integer) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN abs(trunc(amount)) < 120000 / months
      AND extract(year FROM ts) + trunc(amount) * months / 12.0 BETWEEN -1 AND 10001
    THEN public.rb_f_in_range(ts + make_interval(months => (trunc(amount) * months)::integer))
  END
$$;

CREATE FUNCTION rb_f_dateadd(ts timestamp, amount float8, unit text) RETURNS timestamp
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN public.rb_f_unit_ms(unit) IS NOT NULL THEN public.rb_f_add_ms(ts, amount, public.rb_f_unit_ms(unit))
    WHEN public.rb_f_unit_months(unit) IS NOT NULL THEN public.rb_f_add_months(ts, amount, public.rb_f_unit_months(unit))
  END
$$;

-- Whole calendar months from b to a, less one when a's day and time of day come before b's
-- (mirrored when a is before b).
CREATE FUNCTION rb_f_months_between(a timestamp, b timestamp) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  SELECT ((extract(year FROM a) - extract(year FROM b)) * 12 + extract(month FROM a) - extract(month FROM b))::integer
    - CASE
        WHEN a >= b AND (a - date_trunc('month', a)) < (b - date_trunc('month', b)) THEN 1
        WHEN a < b AND (a - date_trunc('month', a)) > (b - date_trunc('month', b)) THEN -1
        ELSE 0
      END
$$;

-- a - b in whole units, truncated toward zero; an unknown unit is seconds.
CREATE FUNCTION rb_f_datetime_diff(a timestamp, b timestamp, unit text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE
    WHEN public.rb_f_unit_months(unit) IS NOT NULL
      THEN trunc(public.rb_f_months_between(a, b)::float8 / public.rb_f_unit_months(unit))
    ELSE trunc((public.rb_f_epoch_ms(a) - public.rb_f_epoch_ms(b)) / coalesce(public.rb_f_unit_ms(unit), 1000))
  END
$$;

-- migrate:down
DROP FUNCTION rb_f_datetime_diff(timestamp, timestamp, text);
DROP FUNCTION rb_f_months_between(timestamp, timestamp);
DROP FUNCTION rb_f_dateadd(timestamp, float8, text);
DROP FUNCTION rb_f_add_months(timestamp, float8, integer);
DROP FUNCTION rb_f_add_ms(timestamp, float8, float8);
DROP FUNCTION rb_f_unit_months(text);
DROP FUNCTION rb_f_unit_ms(text);
DROP FUNCTION rb_f_from_epoch_ms(float8);
DROP FUNCTION rb_f_epoch_ms(timestamp);
DROP FUNCTION rb_f_parse_date(text);
DROP FUNCTION rb_f_in_range(timestamp);
DROP FUNCTION rb_f_weekday(timestamp, text);
DROP FUNCTION rb_f_rept(text, float8);
DROP FUNCTION rb_f_replace(text, float8, float8, text);
DROP FUNCTION rb_f_mid(text, float8, float8);
DROP FUNCTION rb_f_right(text, float8);
DROP FUNCTION rb_f_left(text, float8);
DROP FUNCTION rb_f_whole(float8);
DROP FUNCTION rb_f_substitute(text, text, text, float8);
DROP FUNCTION rb_f_substitute(text, text, text);
DROP FUNCTION rb_f_find(text, text, float8);
DROP FUNCTION rb_f_aggregate(float8[], text);
DROP FUNCTION rb_f_item_numbers(text[]);
DROP FUNCTION rb_f_unique(text[]);
DROP FUNCTION rb_f_one_item(text);
DROP FUNCTION rb_f_join(text[], text);
DROP FUNCTION rb_f_datetime_text(timestamp);
DROP FUNCTION rb_f_date_text(timestamp);
DROP FUNCTION rb_f_number_text(float8);
DROP FUNCTION rb_f_value(text);
DROP FUNCTION rb_f_mod(float8, float8);
DROP FUNCTION rb_f_to_multiple(float8, float8, boolean);
DROP FUNCTION rb_f_round_unit(float8, text);
DROP FUNCTION rb_f_round(float8, float8, text);
DROP FUNCTION rb_f_pow10(integer);
DROP FUNCTION rb_f_pow(float8, float8);
DROP FUNCTION rb_f_sqrt(float8);
DROP FUNCTION rb_f_log(float8, float8);
DROP FUNCTION rb_f_ln(float8);
DROP FUNCTION rb_f_exp(float8);
DROP FUNCTION rb_f_div(float8, float8);
DROP FUNCTION rb_f_div_wide(float8, float8);
DROP FUNCTION rb_f_mul(float8, float8);
DROP FUNCTION rb_f_mul_wide(float8, float8);
DROP FUNCTION rb_f_sub(float8, float8);
DROP FUNCTION rb_f_add(float8, float8);
DROP FUNCTION rb_f_add_wide(float8, float8);
DROP FUNCTION rb_f_half(float8);
DROP FUNCTION rb_f_attachment_names(jsonb);
DROP FUNCTION rb_f_compact(text[]);
DROP FUNCTION rb_f_trim(text);
DROP FUNCTION rb_f_upper(text);
DROP FUNCTION rb_f_lower(text);
DROP FUNCTION rb_f_nonempty(text);
DROP FUNCTION rb_f_text_cmp(text, text);
