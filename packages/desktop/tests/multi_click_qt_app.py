"""A Qt line edit holding "hello world" that says what is done to it, for the multi-click
tests: ``multi_click_qt_app.py pyqt5|pyside6`` (Debian's PyQt5 with the system Python,
PySide6 from ``.venv-qt``).

Prints "world X Y" (the screen point in the middle of "world") once shown, then
"press entry N" for every press of the left button (N: 1, or 2 for the press Qt makes a
double-click), "selected TEXT" whenever the selection changes and "text TEXT" when the
text does.
"""

import sys

if sys.argv[1:] == ["pyside6"]:
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QFont
    from PySide6.QtWidgets import QApplication, QLineEdit
else:
    from PyQt5.QtCore import QTimer
    from PyQt5.QtGui import QFont
    from PyQt5.QtWidgets import QApplication, QLineEdit


class Entry(QLineEdit):
    def mousePressEvent(self, event):
        print("press entry 1", flush=True)
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event):
        print("press entry 2", flush=True)
        super().mouseDoubleClickEvent(event)


app = QApplication(sys.argv[:1])
entry = Entry("hello world")
font = QFont("DejaVu Sans Mono")
font.setPixelSize(30)
entry.setFont(font)
entry.setWindowTitle("Qt multi-click")
entry.move(40, 40)  # no window manager: the window is where it asks to be
entry.resize(420, 60)
selected = [None]


def selection_changed():
    text = entry.selectedText()
    if text != selected[0]:
        selected[0] = text
        print(f"selected {text}", flush=True)


def say_where():
    # the middle of "world"'s r: between the cursor before it and the one after it
    start = entry.text().index("world") + 2
    entry.setCursorPosition(start)
    left = entry.cursorRect().center()
    entry.setCursorPosition(start + 1)
    right = entry.cursorRect().center()
    entry.setCursorPosition(0)
    middle = entry.mapToGlobal((left + right) / 2)
    print(f"world {middle.x()} {middle.y()}", flush=True)
    entry.selectionChanged.connect(selection_changed)
    entry.textChanged.connect(lambda text: print(f"text {text}", flush=True))


entry.show()
QTimer.singleShot(300, say_where)
sys.exit(app.exec() if hasattr(app, "exec") else app.exec_())
