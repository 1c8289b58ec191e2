"""A Qt form for the element tests, run with the system Python (PyQt5) or a venv's
(PySide6): ``qt_form.py pyqt5|pyside6``.

Two buttons, "Save" and "Cancel", in a window titled "Qt form" at 0,0. Prints "ready"
once the window is shown, and "clicked <name>" for each button clicked.
"""

import sys

if sys.argv[1:] == ["pyside6"]:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QPushButton, QVBoxLayout, QWidget
else:
    from PyQt5.QtCore import QTimer
    from PyQt5.QtWidgets import QApplication, QPushButton, QVBoxLayout, QWidget

app = QApplication(sys.argv[:1])
window = QWidget()
window.setWindowTitle("Qt form")
window.move(0, 0)
window.resize(300, 160)
column = QVBoxLayout(window)
for name in ("Save", "Cancel"):
    button = QPushButton(name)
    button.clicked.connect(lambda _=False, n=name: print("clicked", n, flush=True))
    column.addWidget(button)
window.show()
QTimer.singleShot(500, lambda: print("ready", flush=True))
sys.exit(app.exec() if hasattr(app, "exec") else app.exec_())
