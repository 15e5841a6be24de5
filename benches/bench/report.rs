//! How a bench prints a figure next to its goal: one line per goal, the ratio from the same run.

/// `<label>: <figure> <unit>  goal <= <goal> <unit>  ratio <figure ÷ goal><note>` (the goal an
/// upper bound).
pub fn print_goal(label: &str, figure: f64, unit: &str, goal: f64, note: &str) {
    println!(
        "{label}: {figure:.2} {unit}  goal <= {goal:.1} {unit}  ratio {:.2}{note}",
        figure / goal
    );
}
