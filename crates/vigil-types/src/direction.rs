/// Which way a packet travels within its flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    ToServer,
    ToClient,
}

impl Direction {
    pub const fn flip(self) -> Self {
        match self {
            Direction::ToServer => Direction::ToClient,
            Direction::ToClient => Direction::ToServer,
        }
    }
}

/// One value per direction of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerDir<T> {
    pub to_server: T,
    pub to_client: T,
}

impl<T> PerDir<T> {
    pub fn get(&self, dir: Direction) -> &T {
        match dir {
            Direction::ToServer => &self.to_server,
            Direction::ToClient => &self.to_client,
        }
    }

    pub fn get_mut(&mut self, dir: Direction) -> &mut T {
        match dir {
            Direction::ToServer => &mut self.to_server,
            Direction::ToClient => &mut self.to_client,
        }
    }
}
