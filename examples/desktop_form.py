"""The desktop's sample form, run from a checkout: ``python examples/desktop_form.py``
is ``python -m viewfinder.desktop.sample_form`` (the module says what the form holds)."""

from viewfinder.desktop.sample_form import main, write_state

__all__ = ["main", "write_state"]

if __name__ == "__main__":
    main()
