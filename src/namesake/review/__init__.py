"""The reviewer's loop: accept, edit, reject or fix by hand (`service`), groups of one pair and undo (`reopen`)."""
