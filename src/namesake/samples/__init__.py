"""The sample meetings `namesake demo` analyses (English and French)."""
