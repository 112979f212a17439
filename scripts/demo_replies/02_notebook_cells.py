"""The model's side of `notebooks/02_notebook_cells.ipynb`: what the loopback server answers, in order."""

from copilot_nb.testing import call, reply

PROVIDER = "openai"
ABOUT = "## Revenue\n\nQuantity times price, summed over the orders."
FIX = (
    "**Fixed:** `csv.DictReader` reads every field as a string, so "
    '`o["qty"] * o["price"]` multiplied two strings and raised a `TypeError`. The cell now '
    "converts them with `int()` and `float()` first."
)
STEPS = [
    reply("Let me look at the notebook first.", call("list_cells", notebook="analysis.ipynb")),
    reply("", call("read_cell", cell_id="total", notebook="analysis.ipynb")),
    reply(
        "`csv.DictReader` gives strings, so the product fails. Converting both fields, "
        "and writing the notes:",
        call(
            "edit_cell",
            cell_id="total",
            old_str='o["qty"] * o["price"]',
            new_str='int(o["qty"]) * float(o["price"])',
            notebook="analysis.ipynb",
        ),
        call("replace_cell", cell_id="about", source=ABOUT, notebook="analysis.ipynb"),
        call(
            "insert_cell",
            after_cell_id="total",
            cell_type="markdown",
            source=FIX,
            notebook="analysis.ipynb",
        ),
    ),
    reply(
        "Fixed **analysis.ipynb**: the `total` cell now converts `qty` with `int()` and "
        "`price` with `float()` before multiplying (the CSV reader returns strings). The TODO "
        "above it now says what the cell computes, and a new note below it explains the fix. "
        "Run the notebook again to see `revenue: 22.50`."
    ),
]
