// Auth: filled in by its issue (see DESIGN §2).
enum AuthPlaceholder {}
