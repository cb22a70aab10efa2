"""The sample meetings `namesake demo` analyses (English and French)."""

__all__: list[str] = []  # data only: the meetings are read as files beside this one
