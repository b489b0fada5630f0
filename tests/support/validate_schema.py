# Validates files against a JSON Schema (Draft 2020-12): `+path` must pass,
# `-path` must fail. JSON files are read as JSON, `.toml` files with tomllib.
# Exits with 77 when jsonschema (or, for TOML, Python 3.11's tomllib) is
# missing, so that the calling test reports a skip.
import json, sys
try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match
except ImportError as e:
    print(e)
    sys.exit(77)


def load(path):
    if path.endswith(".toml"):
        try:
            import tomllib
        except ImportError as e:
            print(e)
            sys.exit(77)
        with open(path, "rb") as f:
            return tomllib.load(f)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


with open(sys.argv[1], encoding="utf-8") as f:
    schema = json.load(f)
Draft202012Validator.check_schema(schema)
validator = Draft202012Validator(schema)
failures = 0
for arg in sys.argv[2:]:
    expect, path = arg[0], arg[1:]
    errors = list(validator.iter_errors(load(path)))
    if expect == "+" and errors:
        failures += 1
        e = best_match(errors)
        where = "/" + "/".join(str(p) for p in e.absolute_path)
        print(f"{path}: rejected ({len(errors)} error(s)), e.g. at {where}: {e.message[:400]}")
    elif expect == "-" and not errors:
        failures += 1
        print(f"{path}: accepted, but it should be rejected")
    else:
        print(f"{path}: {'valid' if expect == '+' else 'rejected'} as expected")
sys.exit(1 if failures else 0)
