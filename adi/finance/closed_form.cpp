// Closed-form prices (filled in by issue 5).
namespace adi::finance {}
