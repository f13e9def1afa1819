"""What the model reads: rendering values into bounded one-line text, quoting a server's words,
reading an HTML or XML page, masking secrets, an HTTP exchange's body excerpt and endpoint, reading
an exception's message safely, and a foreign value as text.

Everything here is text in, text out: it imports nothing else of the package, so every other
folder may use it (the layers are checked by ``lint-imports``; docs/explanation/design.md).
"""
