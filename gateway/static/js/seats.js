// One colour per seat, the same on every screen (players list, board, enemy log).
export const SEAT_COLORS = ['#d1495b', '#2e86ab', '#edae49', '#66a182', '#8d6cab', '#f08a4b', '#4f5d75', '#c2a878'];
export const seatColor = (seat) => SEAT_COLORS[((Number(seat) % 8) + 8) % 8];
