"""What talks to the outside: PostgreSQL (engine, schema, migrations), the vector stores, the sentence encoder, the
remote LLM, and the `Runtime` that opens them once per process."""
