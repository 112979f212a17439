"""The file tools: `read_file`, `write_file`, `edit_file`, `list_directory`, and bounded reads of
text files of any size."""
